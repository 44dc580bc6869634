import { randomUUID } from 'node:crypto';
import { brandKitUploadsRepo } from '../../storage/repos/index.js';
import type { Db } from '../../storage/sql/index.js';
import type { Clock } from '../clock.js';
import { validationError } from '../errors.js';
import type { Logger } from '../logger.js';
import { checkImage, decodeContent, type UploadType } from './upload-content.js';

// POST /team/brand-kit/uploads: an image for the brand kit, checked (core/team/upload-content.ts)
// and kept in the database — at most 256 KB, in the one store that is backed up, replicated by
// PostgreSQL and read by every API process alike. It is served on the public router at
// `<link base>/brand-kit/<id>.<ext>`, the URL the upload answers (the link base of
// core/link-base.ts, as share links). The id is a random UUID rather than a time-ordered one:
// uploads are never listed, and a public URL should not tell when it was made nor sit next to
// another team's.

export interface BrandKitUploadsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** scheme://host of links (core/link-base.ts); throws (503) when none can be made. */
  linkBase: () => string;
}

export interface BrandKitUploadView {
  object: 'brand_kit_upload';
  id: string;
  /** The hosted URL: use it as `brand_kit.logo_url`. */
  url: string;
  content_type: UploadType;
  /** Bytes stored (an SVG is stored as the sanitiser wrote it out). */
  size: number;
  /** Pixel size of a PNG or JPEG; null for SVG. */
  width: number | null;
  height: number | null;
  created_at: string;
}

/** A stored image as the public router serves it. */
export interface HostedImage {
  contentType: string;
  content: Buffer;
}

/** Path of hosted uploads under the link base. */
export const hostedUploadsPath = '/brand-kit/';

const extensions: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/svg+xml': 'svg' };
const hostedFile = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(png|jpg|svg)$/;

export function brandKitUploads(deps: BrandKitUploadsDeps) {
  const repo = brandKitUploadsRepo(deps.db);
  return {
    async upload(teamId: string, input: { content?: unknown }): Promise<BrandKitUploadView> {
      const image = await checkImage(decodeContent(input.content));
      // Before the image is stored: an upload whose URL cannot be handed out is not kept.
      const base = deps.linkBase();
      const id = randomUUID();
      const createdAt = deps.clock.now().toISOString();
      await repo.insert({ id, team_id: teamId, content_type: image.contentType, size: image.bytes.length, content: image.bytes, created_at: createdAt });
      deps.logger.info({ teamId, uploadId: id, contentType: image.contentType, size: image.bytes.length }, 'brand kit image uploaded');
      return {
        object: 'brand_kit_upload', id, url: `${base}${hostedUploadsPath}${id}.${extensions[image.contentType]}`,
        content_type: image.contentType, size: image.bytes.length, width: image.width, height: image.height, created_at: createdAt,
      };
    },

    /** What `/brand-kit/<file>` serves, or undefined (404): an unknown id, or the wrong extension. */
    async open(file: string): Promise<HostedImage | undefined> {
      const match = hostedFile.exec(file);
      if (!match) return undefined;
      const row = await repo.byId(match[1]!);
      if (!row || extensions[row.content_type] !== match[2]) return undefined;
      return { contentType: row.content_type, content: row.content };
    },
  };
}

export type BrandKitUploadsService = ReturnType<typeof brandKitUploads>;

/**
 * Whether `url` is one of svc's own hosted uploads: false when it is not svc's (the caller's
 * https rule applies), true when it is one of this team's, whatever its scheme (on a loopback
 * appliance links are http). One that names another team's upload, or none, is refused (422).
 */
export async function hostedLogo(deps: Pick<BrandKitUploadsDeps, 'db' | 'linkBase'>, teamId: string, url: string): Promise<boolean> {
  let prefix: string;
  try {
    prefix = deps.linkBase() + hostedUploadsPath;
  } catch {
    return false; // no link base: svc has handed out no hosted URL it could recognise now
  }
  if (!url.startsWith(prefix)) return false;
  const match = hostedFile.exec(url.slice(prefix.length));
  const type = match ? await brandKitUploadsRepo(deps.db).typeOfOwn(teamId, match[1]!) : undefined;
  if (!type || extensions[type] !== match![2]) {
    throw validationError(422, 'brand_kit.logo_url', '`brand_kit.logo_url` points at svc\'s hosted images but names no image this team uploaded.');
  }
  return true;
}
