import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IMPORT_FILE_MAX_BYTES, type ImportFields, type ImportUpload } from '../../core/contact-imports/index.js';
import { ServiceError, validationError } from '../../core/errors.js';
import type { ApiDeps } from '../deps.js';

// The multipart body of POST /contacts/imports, read with busboy as it arrives: the `file` part
// streams into the import's file under the data folder (never into memory) and stops at 50 MB;
// the text fields become the route's form fields (req.body, which tsoa reads and the request log
// records). Runs as the operation's own middleware, after the contract layer (route match, key,
// rate limit) and before tsoa: the JSON body reader leaves multipart bodies alone. A refused or
// broken upload leaves no file behind.

const fieldNames: readonly (keyof ImportFields)[] = ['column_map', 'on_conflict', 'segments', 'topics'];
const MAX_FIELD_BYTES = 1024 * 1024;
const megabytes = IMPORT_FILE_MAX_BYTES / (1024 * 1024);

/** What the middleware hands the controller. */
export interface ReceivedImport {
  upload: ImportUpload | undefined;
  fileName: string | null;
  /** Set by the controller when it hands the upload to the service, which then owns the file. */
  claimed: boolean;
}

export const receivedImportOf = (res: Response): ReceivedImport => (res.locals as { contactImport: ReceivedImport }).contactImport;

export const contactImportUpload: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
  const deps = req.app.locals.deps as ApiDeps;
  const received: ReceivedImport = { upload: undefined, fileName: null, claimed: false };
  (res.locals as { contactImport: ReceivedImport }).contactImport = received;
  // Whatever happens after (a refusal, a dropped connection), a file nobody claimed goes.
  res.once('close', () => {
    if (received.upload && !received.claimed) void received.upload.discard().catch(() => undefined);
  });
  readUpload(req, deps, received).then((fields) => {
    req.body = fields;
    next();
  }, async (err: unknown) => {
    await received.upload?.discard().catch(() => undefined);
    next(err);
  });
};

const refuse = (message: string, path = 'body') => new ServiceError(400, 'validation_error', message, { errors: [{ path, message }] });

function parserFor(req: Request): busboy.Busboy {
  try {
    return busboy({
      headers: req.headers, defParamCharset: 'utf8',
      limits: { fileSize: IMPORT_FILE_MAX_BYTES, files: 1, fields: fieldNames.length, fieldSize: MAX_FIELD_BYTES, parts: fieldNames.length + 1 },
    });
  } catch {
    throw refuse('The body must be multipart/form-data with a `file` part.');
  }
}

async function readUpload(req: Request, deps: ApiDeps, received: ReceivedImport): Promise<ImportFields> {
  const parser = parserFor(req);
  const fields: Record<string, string> = {};
  let refusal: ServiceError | undefined;
  let tooLarge = false;
  let writing: Promise<void> = Promise.resolve();
  let fileStream: NodeJS.ReadableStream & { destroy(err?: Error): void } | undefined;
  const refuseOnce = (err: ServiceError) => { refusal ??= err; };
  parser.on('field', (name, value, info) => {
    if (!(fieldNames as readonly string[]).includes(name)) refuseOnce(refuse(`Unknown field \`${name.slice(0, 100)}\`.`, name.slice(0, 100)));
    else if (info.valueTruncated) refuseOnce(validationError(422, name, `\`${name}\` is longer than ${MAX_FIELD_BYTES} bytes.`));
    else if (name in fields) refuseOnce(refuse(`\`${name}\` is sent more than once.`, name));
    else fields[name] = value;
  });
  parser.on('file', (name, stream, info) => {
    if (name !== 'file') {
      stream.resume();
      return refuseOnce(refuse(`Unknown file part \`${name.slice(0, 100)}\`: the CSV goes in \`file\`.`, name.slice(0, 100)));
    }
    received.fileName = info.filename ?? null;
    fileStream = stream;
    stream.once('limit', () => { tooLarge = true; });
    writing = deps.audience.contactImports.startUpload().then((upload) => {
      received.upload = upload;
      return pipeline(stream, upload.stream);
    }).catch((err: unknown) => {
      stream.resume();
      throw err;
    });
    writing.catch(() => undefined);
  });
  parser.on('filesLimit', () => refuseOnce(refuse('Only one file may be sent, in `file`.', 'file')));
  parser.on('fieldsLimit', () => refuseOnce(refuse(`At most ${fieldNames.length} fields besides the file: ${fieldNames.join(', ')}.`)));
  parser.on('partsLimit', () => refuseOnce(refuse('The body has more parts than an import takes.')));
  try {
    await new Promise<void>((resolve, reject) => {
      parser.once('close', resolve);
      parser.once('error', (err: Error) => reject(refuse(`The multipart body cannot be read: ${err.message}`)));
      req.pipe(parser);
    });
  } catch (err) {
    fileStream?.destroy(err as Error);
    // The file may still be opening: let it settle so the caller's discard finds it.
    await writing.catch(() => undefined);
    throw err;
  }
  await writing;
  if (tooLarge) throw validationError(422, 'file', `The file is larger than ${megabytes} MB, the most an import may be.`);
  if (refusal) throw refusal;
  return fields;
}
