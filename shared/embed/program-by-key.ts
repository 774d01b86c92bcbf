import { and, eq, isNull } from "drizzle-orm";
import type { Db } from "../../db/create-db.ts";
import { widgetPrograms } from "../../db/schema/widget-programs.ts";
import { notFound } from "../domain/errors.ts";

/** The live widget program of an embed key; an unknown or deleted key: 404. The key grants nothing else. */
export async function programByEmbedKey(db: Db, embedKey: string) {
  if (!/^ek_(test|live)_[0-9A-Za-z]{24}$/.test(embedKey)) throw notFound("Embed key");
  const [program] = await db
    .select()
    .from(widgetPrograms)
    .where(and(eq(widgetPrograms.embedKey, embedKey), isNull(widgetPrograms.deletedAt)))
    .limit(1);
  if (!program) throw notFound("Embed key");
  return program;
}
