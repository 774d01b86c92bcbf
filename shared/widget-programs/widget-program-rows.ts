import type { Db } from "../../db/create-db.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";
import { generateEmbedKey } from "../auth/api-keys.ts";
import { newId } from "../domain/ids.ts";
import type { TenantMode } from "../domain/rails.ts";

/** The insert of a new program with a freshly generated embed key. */
export function createWidgetProgramStatement(
  db: Db,
  input: { tenantId: string; mode: TenantMode; merchantConfigId: string; name: string; allowedOrigins: string[]; now: Date },
) {
  const row = {
    id: newId(),
    tenantId: input.tenantId,
    merchantConfigId: input.merchantConfigId,
    name: input.name,
    embedKey: generateEmbedKey(input.mode),
    allowedOrigins: input.allowedOrigins,
    createdAt: input.now,
    updatedAt: input.now,
    deletedAt: null,
  };
  return { row, statement: db.insert(widgetPrograms).values(row) };
}
