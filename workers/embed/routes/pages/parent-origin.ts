import type { ProgramContext } from "../../../../shared/embed/program-context.ts";

/**
 * The framing page's origin from `?parent=`, only when it is exactly one of
 * the program's allowed origins; otherwise null, and the page posts nothing.
 */
export const parentOriginFor = (program: ProgramContext, parent: string | undefined): string | null =>
  parent !== undefined && program.program.allowedOrigins.includes(parent) ? parent : null;
