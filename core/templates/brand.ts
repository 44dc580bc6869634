import { brandKitView, defaultBrandKit, parseBrandKit, type BrandKit } from '../team/index.js';
import { ServiceError, validationError } from '../errors.js';
import type { BrandToken } from './placeholders.js';

// Brand kit tokens (`{{brand.primary_color}}`, …) rendered from the team's kit at send time, with
// the template's `brand_overrides` over it: an omitted key follows the brand, a null key uses the
// plain default, and a field that is still null renders the neutral default (empty text).

export type BrandOverrides = Partial<Record<keyof BrandKit, string | null>>;

const kitFields = Object.keys(defaultBrandKit) as (keyof BrandKit)[];

const fontStacks: Record<BrandKit['font'], string> = {
  system: '-apple-system, BlinkMacSystemFont, Segoe UI, Roboto, Helvetica, Arial, sans-serif',
  helvetica: 'Helvetica, Arial, sans-serif',
  arial: 'Arial, Helvetica, sans-serif',
  verdana: 'Verdana, Geneva, sans-serif',
  georgia: 'Georgia, Times New Roman, Times, serif',
  times: 'Times New Roman, Times, serif',
  courier: 'Courier New, Courier, monospace',
};

const buttonRadius: Record<BrandKit['button_style'], string> = { square: '0px', rounded: '6px', pill: '999px' };

/** `brand_overrides` from a request: an object of kit fields (each checked as the kit checks it) or null. */
export function parseBrandOverrides(input: unknown): BrandOverrides | null {
  if (input === undefined || input === null) return null;
  if (typeof input !== 'object' || Array.isArray(input)) throw validationError(422, 'brand_overrides', '`brand_overrides` is an object or null.');
  const out: BrandOverrides = {};
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (!(kitFields as string[]).includes(key)) throw validationError(422, `brand_overrides.${key}`, `\`${key}\` is not a brand field; they are ${kitFields.join(', ')}.`);
    if (value === null) {
      out[key as keyof BrandKit] = null;
      continue;
    }
    try {
      const checked = parseBrandKit({ ...Object.fromEntries(kitFields.map((f) => [f, null])), [key]: value });
      out[key as keyof BrandKit] = checked[key as keyof BrandKit] as string;
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      throw validationError(422, `brand_overrides.${key}`, err.message.replaceAll('brand_kit.', 'brand_overrides.'));
    }
  }
  return out;
}

/** The tokens' text for one send: the team's stored kit, then the template's overrides. */
export function brandValues(storedKit: string | null, overrides: BrandOverrides | null): Record<BrandToken, string> {
  const kit: Record<string, string | null> = { ...brandKitView(storedKit) };
  for (const [key, value] of Object.entries(overrides ?? {})) kit[key] = value ?? defaultBrandKit[key as keyof BrandKit];
  const font = (kit.font ?? defaultBrandKit.font) as BrandKit['font'];
  const style = (kit.button_style ?? defaultBrandKit.button_style) as BrandKit['button_style'];
  return {
    logo_url: kit.logo_url ?? '',
    primary_color: kit.primary_color ?? defaultBrandKit.primary_color,
    accent_color: kit.accent_color ?? defaultBrandKit.accent_color,
    font: fontStacks[font] ?? fontStacks.system,
    button_radius: buttonRadius[style] ?? buttonRadius.rounded,
    company_name: kit.company_name ?? '',
    address: kit.address ?? '',
    footer_text: kit.footer_text ?? '',
  };
}
