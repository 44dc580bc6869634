import { validationError } from '../errors.js';

// One-line text fields of the team profile: a string, no line break or other control character,
// at most `max` characters (code points, as a person counts them).

const controlChars = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export function oneLine(path: string, value: unknown, max: number, min = 0): string {
  if (typeof value !== 'string') throw validationError(422, path, `\`${path}\` must be a string.`);
  if (controlChars.test(value)) throw validationError(422, path, `\`${path}\` must be one line of text.`);
  const length = [...value].length;
  if (length < min || length > max) {
    throw validationError(422, path, min > 0 ? `\`${path}\` must be ${min}-${max} characters.` : `\`${path}\` must be at most ${max} characters.`);
  }
  return value;
}
