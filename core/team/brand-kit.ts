import { missingField, validationError } from '../errors.js';
import { oneLine } from './text.js';

// The brand kit (templates read it): sent whole on update, every field present; a field sent as
// null goes back to its default, and so does every field when the whole kit is null. Stored as
// the fields the team set; the view fills in the defaults.

export const brandFonts = ['system', 'helvetica', 'arial', 'verdana', 'georgia', 'times', 'courier'] as const;
export const buttonStyles = ['square', 'rounded', 'pill'] as const;

export interface BrandKit {
  logo_url: string | null;
  primary_color: string;
  accent_color: string;
  font: (typeof brandFonts)[number];
  button_style: (typeof buttonStyles)[number];
  company_name: string | null;
  address: string | null;
  footer_text: string | null;
}

export type BrandKitInput = { [K in keyof BrandKit]: string | null };

export const defaultBrandKit: BrandKit = {
  logo_url: null, primary_color: '#111827', accent_color: '#2563eb', font: 'system', button_style: 'rounded',
  company_name: null, address: null, footer_text: null,
};

const fields = Object.keys(defaultBrandKit) as (keyof BrandKit)[];
const hexColour = /^#[0-9a-fA-F]{6}$/;

/**
 * The fields to store (defaults left out), from a whole kit; null resets every field.
 * `hostedLogo`: a logo URL already found to be one of the team's own uploads (core/team/uploads.ts),
 * taken whatever its scheme — a loopback appliance hosts them on http.
 */
export function parseBrandKit(input: unknown, hostedLogo?: string): Partial<BrandKit> {
  if (input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw validationError(422, 'brand_kit', '`brand_kit` must be an object or null.');
  const raw = input as Record<string, unknown>;
  for (const field of fields) if (!(field in raw)) throw missingField(`brand_kit.${field}`);
  const kit: Partial<BrandKit> = {};
  for (const field of fields) {
    const value = raw[field];
    if (value === null) continue;
    (kit as Record<string, string>)[field] = field === 'logo_url' && hostedLogo !== undefined && value === hostedLogo
      ? oneLine(`brand_kit.${field}`, value, 2048)
      : checkField(field, value);
  }
  return kit;
}

function checkField(field: keyof BrandKit, value: unknown): string {
  const path = `brand_kit.${field}`;
  switch (field) {
    case 'logo_url':
      return httpsUrl(path, oneLine(path, value, 2048));
    case 'primary_color':
    case 'accent_color': {
      const colour = oneLine(path, value, 7);
      if (!hexColour.test(colour)) throw validationError(422, path, `\`${path}\` must be a six-digit hex colour such as #1a2b3c.`);
      return colour.toLowerCase();
    }
    case 'font':
      return oneOf(path, value, brandFonts);
    case 'button_style':
      return oneOf(path, value, buttonStyles);
    case 'company_name':
    case 'address':
      return oneLine(path, value, 200);
    case 'footer_text':
      return oneLine(path, value, 500);
  }
}

function oneOf(path: string, value: unknown, allowed: readonly string[]): string {
  if (typeof value !== 'string' || !allowed.includes(value)) throw validationError(422, path, `\`${path}\` must be one of ${allowed.join(', ')}.`);
  return value;
}

function httpsUrl(path: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw validationError(422, path, `\`${path}\` must be an absolute https URL.`);
  }
  if (url.protocol !== 'https:' || url.username || url.password || !url.hostname) {
    throw validationError(422, path, `\`${path}\` must be an absolute https URL without credentials, or the \`url\` of an image this team uploaded.`);
  }
  return value;
}

/** The kit as the team object shows it: what was set over the defaults. */
export function brandKitView(stored: string | null): BrandKit {
  return { ...defaultBrandKit, ...(stored ? (JSON.parse(stored) as Partial<BrandKit>) : {}) };
}
