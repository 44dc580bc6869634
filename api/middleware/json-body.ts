import express, { type RequestHandler } from 'express';
import { ServiceError } from '../../core/errors.js';

/**
 * Shape bounds every parsed JSON body must keep before anything validates it: validators and
 * services recurse into bodies and loop over members, so a body 10,000 levels deep overflowed the
 * stack (a 500) and one with 200,000 members reached SQLite. The product's own caps (tags,
 * headers, recipients, attachments) are checked later, in core, with their 422s.
 */
export const jsonBounds = {
  /** Objects and arrays inside one another, the body itself counting as 1. */
  maxDepth: 32,
  /** Keys of one object, and members of one array that holds objects or arrays. */
  maxMembers: 10_000,
} as const;

const members = jsonBounds.maxMembers.toLocaleString('en');

export interface BoundBreach {
  /** Where, from the body root: `tags.a[0]`; empty for the body itself. */
  path: string;
  message: string;
}

interface Pending {
  value: object;
  path: string;
  depth: number;
}

/**
 * The first place a parsed body breaks `jsonBounds`, or undefined. Iterative (a recursive walk
 * would fail on exactly the bodies it is meant to refuse). Arrays of plain values, such as a
 * Buffer's bytes, are bounded by the body size alone.
 */
export function findBoundBreach(body: unknown): BoundBreach | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const stack: Pending[] = [{ value: body, path: '', depth: 1 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (depth > jsonBounds.maxDepth) return { path, message: `nested deeper than ${jsonBounds.maxDepth} levels` };
    if (Array.isArray(value)) {
      let containers = 0;
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (child === null || typeof child !== 'object') continue;
        if (++containers > jsonBounds.maxMembers) return { path, message: `more than ${members} items that are objects or arrays` };
        stack.push({ value: child, path: `${path}[${i}]`, depth: depth + 1 });
      }
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > jsonBounds.maxMembers) return { path, message: `more than ${members} fields` };
    for (const key of keys) {
      const child: unknown = (value as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push({ value: child, path: path ? `${path}.${key}` : key, depth: depth + 1 });
    }
  }
  return undefined;
}

/**
 * The JSON body reader of the contract layer: express's parser, then the shape bounds. A body
 * that cannot be decompressed (a corrupt gzip, deflate, br or zstd stream) comes from the parser
 * as a 400 carrying the decompressor's own error and no `type`: it is the client's, never a 500.
 */
export function jsonBody(limitBytes: number): RequestHandler {
  const parse = express.json({ limit: limitBytes, strict: false });
  return (req, res, next) => {
    parse(req, res, (err?: unknown) => {
      if (err !== undefined) return next(readFailure(err));
      const breach = findBoundBreach(req.body);
      if (!breach) return next();
      const path = breach.path || 'body';
      next(new ServiceError(400, 'validation_error', `Invalid field: ${path} (${breach.message}).`, {
        errors: [{ path, message: breach.message }],
      }));
    });
  };
}

function readFailure(err: unknown): unknown {
  const e = err as { type?: unknown; status?: unknown } | null;
  if (!e || e.type !== undefined || typeof e.status !== 'number' || e.status >= 500) return err;
  return new ServiceError(400, 'validation_error', 'The request body could not be decoded with its `Content-Encoding`.', {
    errors: [{ path: 'content-encoding', message: 'the body is not valid for this encoding' }],
  });
}
