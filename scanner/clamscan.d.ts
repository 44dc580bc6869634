// clamscan ships no types; this is the part of its API svc uses.
declare module 'clamscan' {
  import type { Readable } from 'node:stream';
  export interface ScanResult {
    isInfected: boolean | null;
    viruses: string[];
  }
  export default class NodeClam {
    init(options: Record<string, unknown>): Promise<NodeClam>;
    ping(): Promise<unknown>;
    scanStream(stream: Readable): Promise<ScanResult>;
  }
}
