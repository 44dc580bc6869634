/** The roles one svc process can run (`svc start --role …`); one systemd unit each. */
export const roles = ['api', 'inbound', 'outbound', 'jobs'] as const;
export type Role = (typeof roles)[number];

/** A region's outbound places on the data folder: `outbound-<region>`, then `outbound-<region>-2` … up to outbound_processes. */
export const outboundPlaces = (region: string, processes: number) => Array.from({ length: processes }, (_, i) => (i === 0 ? `outbound-${region}` : `outbound-${region}-${i + 1}`));
