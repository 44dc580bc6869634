import { Transform, type TransformCallback } from 'node:stream';

// SMTP smuggling defences on the DATA stream (after smtp-server removed the transparency dots).
// smtp-server ends DATA only at <CRLF>.<CRLF>, so nothing here can split a message; what it guards
// is the content svc keeps and may one day hand on:
// - a bare LF ends a line (as Postfix's default `smtpd_forbid_bare_newline = normalize` treats it)
//   and is stored as CRLF, so every stored message has one line-ending convention;
// - a bare CR is refused: no mail program needs it, and it is the other half of every smuggling
//   variant (sendmail 8.18 refuses it by default);
// - a line holding only "." that touches a bare LF (<LF>.<LF>, <LF>.<CRLF>, <CRLF>.<LF>) is an
//   end-of-data that some other server would honour: the message is refused rather than stored
//   with a smuggled second message inside it.

export type LineProblem = 'bare_cr' | 'dot_line_with_bare_lf';

type Break = 'crlf' | 'lf' | 'start';

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const CRLF = Buffer.from('\r\n');

export class LineGuard extends Transform {
  /** The first problem seen; the message must be refused when set. */
  problem: LineProblem | undefined;
  /** Bare LFs turned into CRLF. */
  bareLf = 0;
  /** Bytes passed on (after normalising). */
  size = 0;
  private pendingCr = false;
  private lastBreak: Break = 'start';
  private lineLength = 0;
  private lineIsDot = false;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const out: Buffer[] = [];
    let from = 0;
    let i = 0;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (chunk[0] === LF) {
        out.push(CRLF);
        this.lineBreak('crlf');
        from = i = 1;
      } else {
        this.flag('bare_cr');
        out.push(Buffer.from([CR]));
        this.lineBytes(Buffer.from([CR]), 0, 1);
      }
    }
    while (i < chunk.length) {
      const next = nextBreak(chunk, i);
      if (next === -1) break;
      this.lineBytes(chunk, i, next);
      if (chunk[next] === LF) {
        out.push(chunk.subarray(from, next), CRLF);
        this.bareLf++;
        this.lineBreak('lf');
        from = i = next + 1;
      } else if (next + 1 >= chunk.length) {
        out.push(chunk.subarray(from, next));
        this.pendingCr = true;
        from = i = next + 1;
      } else if (chunk[next + 1] === LF) {
        out.push(chunk.subarray(from, next + 2));
        this.lineBreak('crlf');
        from = i = next + 2;
      } else {
        this.flag('bare_cr');
        this.lineBytes(chunk, next, next + 1);
        i = next + 1;
      }
    }
    this.lineBytes(chunk, i, chunk.length);
    if (from < chunk.length) out.push(chunk.subarray(from));
    const data = out.length === 1 ? out[0]! : Buffer.concat(out);
    this.size += data.length;
    callback(null, data);
  }

  override _flush(callback: TransformCallback): void {
    if (this.pendingCr) {
      this.flag('bare_cr');
      this.size += 1;
      this.push(Buffer.from([CR]));
    }
    callback();
  }

  private lineBytes(chunk: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.lineLength === 0) this.lineIsDot = chunk[start] === DOT;
    this.lineLength += end - start;
  }

  private lineBreak(kind: 'crlf' | 'lf'): void {
    if (this.lineLength === 1 && this.lineIsDot && (kind === 'lf' || this.lastBreak === 'lf')) this.flag('dot_line_with_bare_lf');
    this.lastBreak = kind;
    this.lineLength = 0;
    this.lineIsDot = false;
  }

  private flag(problem: LineProblem): void {
    this.problem ??= problem;
  }
}

function nextBreak(chunk: Buffer, from: number): number {
  const cr = chunk.indexOf(CR, from);
  const lf = chunk.indexOf(LF, from);
  if (cr === -1) return lf;
  if (lf === -1) return cr;
  return Math.min(cr, lf);
}
