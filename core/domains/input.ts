import { ServiceError, validationError } from '../errors.js';
import { isRegionName, type RegionName } from '../regions.js';
import { parseHostLabel } from './names.js';

export interface CapabilitiesInput {
  sending?: string;
  receiving?: string;
}

export interface CreateDomainInput {
  name?: string;
  region?: string;
  custom_return_path?: string;
  capabilities?: CapabilitiesInput;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tls?: string;
  tracking_subdomain?: string;
  receiving_host?: string;
  /** Turn receiving on even where the name's MX delivers elsewhere today. */
  confirm_replace_mx?: boolean;
}

export interface UpdateDomainInput {
  capabilities?: CapabilitiesInput;
  open_tracking?: boolean;
  click_tracking?: boolean;
  tls?: string;
  tracking_subdomain?: string;
  custom_return_path?: string;
  receiving_host?: string;
  confirm_replace_mx?: boolean;
  /** Fixed after creation: accepted only when unchanged. */
  region?: string;
  /** SDKs may repeat the path id in the body; accepted when equal. */
  id?: string;
}

/** The settings a domain row carries, checked. */
export interface DomainSettings {
  sending: 'enabled' | 'disabled';
  receiving: 'enabled' | 'disabled';
  open_tracking: number;
  click_tracking: number;
  tls: 'opportunistic' | 'enforced';
  custom_return_path: string;
  tracking_subdomain: string;
  receiving_host: string;
}

export const defaultSettings: DomainSettings = {
  sending: 'enabled', receiving: 'disabled', open_tracking: 0, click_tracking: 0, tls: 'opportunistic',
  custom_return_path: 'send', tracking_subdomain: 'links', receiving_host: '@',
};

export function parseRegion(raw: unknown): RegionName {
  if (raw === undefined || raw === null) return 'us-east-1';
  if (typeof raw !== 'string' || !isRegionName(raw)) {
    throw validationError(422, 'region', 'The `region` field must be one of us-east-1, eu-west-1, sa-east-1, ap-northeast-1.');
  }
  return raw;
}

/** Applies the given fields over `base`; fields not given keep their value. */
export function applySettings(base: DomainSettings, input: CreateDomainInput | UpdateDomainInput): DomainSettings {
  const next = { ...base };
  if (input.capabilities !== undefined) {
    if (!input.capabilities || typeof input.capabilities !== 'object') throw validationError(422, 'capabilities', 'The `capabilities` field must be an object.');
    if (input.capabilities.sending !== undefined) next.sending = capability('capabilities.sending', input.capabilities.sending);
    if (input.capabilities.receiving !== undefined) next.receiving = capability('capabilities.receiving', input.capabilities.receiving);
  }
  if (input.open_tracking !== undefined) next.open_tracking = input.open_tracking ? 1 : 0;
  if (input.click_tracking !== undefined) next.click_tracking = input.click_tracking ? 1 : 0;
  if (input.tls !== undefined) {
    if (input.tls !== 'opportunistic' && input.tls !== 'enforced') throw validationError(422, 'tls', 'The `tls` field must be `opportunistic` or `enforced`.');
    next.tls = input.tls;
  }
  if (input.custom_return_path !== undefined) next.custom_return_path = parseHostLabel(input.custom_return_path, 'custom_return_path', false);
  if (input.tracking_subdomain !== undefined) next.tracking_subdomain = parseHostLabel(input.tracking_subdomain, 'tracking_subdomain', false);
  if (input.receiving_host !== undefined) next.receiving_host = parseHostLabel(input.receiving_host, 'receiving_host', true);
  checkDistinctHosts(next);
  return next;
}

function capability(path: string, value: unknown): 'enabled' | 'disabled' {
  if (value !== 'enabled' && value !== 'disabled') throw validationError(422, path, `The \`${path}\` field must be \`enabled\` or \`disabled\`.`);
  return value;
}

/** The MAIL FROM, tracking and receiving names must differ: each carries its own records. */
function checkDistinctHosts(s: DomainSettings): void {
  if (s.custom_return_path === s.tracking_subdomain || s.custom_return_path === s.receiving_host) {
    throw returnPathInUse(`The return path \`${s.custom_return_path}\` is already used by this domain's ${s.custom_return_path === s.tracking_subdomain ? 'tracking' : 'receiving'} host.`);
  }
  if (s.tracking_subdomain === s.receiving_host) {
    throw validationError(422, 'tracking_subdomain', 'The tracking subdomain and the receiving host must differ.');
  }
}

export const returnPathInUse = (message: string) =>
  new ServiceError(422, 'validation_error', message, { errors: [{ path: 'custom_return_path', message }], details: { reason: 'return_path_in_use' } });
