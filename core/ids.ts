import { v7 as uuidv7 } from 'uuid';

/**
 * Resource ids are UUIDv7: time-ordered, so "newest first" is ordering by id and list cursors are
 * plain item ids.
 */
export const newId = (): string => uuidv7();

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const looksLikeId = (value: string): boolean => uuidShape.test(value);
