import { join } from 'node:path';
import type { Config } from './schema.js';

/** Where the operator socket lives: its own key, or inside the data folder. */
export const adminSocketPath = (config: Config): string => config.admin_socket || join(config.data_dir, 'admin.sock');
