import type { TeamsRepo } from '../../storage/repos/index.js';

// A team's slug: made once from its name when the team is created, never changed by a rename.
// Accents are dropped, anything else that is not a letter or digit becomes a dash; a name with
// nothing left (say, all CJK) becomes `team`. A slug already taken gets -2, -3, … (the unique
// index has the last word under a race).

export function slugBase(name: string): string {
  return name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 48) || 'team';
}

export async function freeSlug(repo: TeamsRepo, name: string): Promise<string> {
  const base = slugBase(name);
  let slug = base;
  for (let n = 2; await repo.slugTaken(slug); n++) slug = `${base}-${n}`;
  return slug;
}
