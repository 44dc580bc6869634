import type { Logger } from '../core/logger.js';
import { clamdClient, parseClamdTarget, pingClamd } from '../scanner/clamd.js';

// `scanner_clamd: auto` (the default): mail is scanned when Debian's clamav-daemon answers on its
// standard socket at start, so an appliance installed with `make run` scans without a setting, and
// one without clamd still starts. Either way one line says whether mail is scanned.

export const STANDARD_CLAMD_SOCKET = '/run/clamav/clamd.ctl';

/** The clamd target svc scans with ('' for none), from the setting and, for `auto`, a PING. */
export async function chooseClamd(setting: string, logger: Logger, socket = STANDARD_CLAMD_SOCKET): Promise<string> {
  if (setting === '') {
    logger.info({ scanner_clamd: '' }, 'virus scanning off: scanner_clamd is empty');
    return '';
  }
  if (setting !== 'auto') {
    logger.info({ clamd: setting }, 'virus scanning on: clamd as configured');
    return setting;
  }
  try {
    await pingClamd(await clamdClient(parseClamdTarget(socket), 2000));
    logger.info({ clamd: socket }, 'virus scanning on: clamd answered on its standard socket');
    return socket;
  } catch (err) {
    logger.warn({ clamd: socket, reason: (err as Error).message }, 'virus scanning off: no clamd answered on its standard socket (set scanner_clamd to its socket or host:port, or empty for no scanning)');
    return '';
  }
}
