/** The roles one svc process can run (`svc start --role …`); one systemd unit each. */
export const roles = ['api', 'inbound', 'outbound', 'jobs'] as const;
export type Role = (typeof roles)[number];
