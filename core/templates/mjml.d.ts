// mjml ships no types; this is the part of its API svc uses (version 5: the compile is async).
declare module 'mjml' {
  export interface MjmlError {
    line: number;
    message: string;
    tagName: string;
    formattedMessage: string;
  }
  export interface MjmlOptions {
    validationLevel?: 'strict' | 'soft' | 'skip';
    keepComments?: boolean;
    minify?: boolean;
  }
  export default function mjml2html(mjml: string, options?: MjmlOptions): Promise<{ html: string; errors: MjmlError[] }>;
}
