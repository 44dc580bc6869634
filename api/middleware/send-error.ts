import type { Response } from 'express';
import type { Translated } from '../errors.js';

export function sendError(res: Response, translated: Translated): void {
  for (const [name, value] of Object.entries(translated.headers)) res.setHeader(name, value);
  res.status(translated.status).json(translated.body);
}
