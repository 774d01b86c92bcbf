import { and, eq } from "drizzle-orm";
import type { Db } from "../../../db/create-db.ts";
import { signers } from "../../../db/schema/wallets.ts";
import { openSecret } from "../../crypto/secret-box.ts";
import { canonicalAddress } from "../../domain/addresses.ts";
import type { Chain } from "../../domain/rails.ts";

/**
 * Where a live adapter gets the key that signs for a tenant's DISBURSEMENT
 * wallet: the operator's sealed signer (DECISIONS.md "Live wallets"), opened
 * only here, at the moment of signing, and never logged or returned.
 */
export type SignerSource = {
  /** The key as installSigner sealed it (EVM: 0x-hex private key; TON: the 32-byte seed as hex), or null when none is installed. */
  privateKey(input: { tenantId: string; chain: Chain; address: string }): Promise<string | null>;
};

const canonical = (chain: Chain, address: string): string => {
  const c = canonicalAddress(chain, address);
  return c.ok ? c.address : address;
};

/** The sealed store: the `signers` table, opened with SECRETS_KEY. */
export function sealedSignerSource(db: Db, secretsKey: string): SignerSource {
  return {
    async privateKey({ tenantId, chain, address }) {
      const [row] = await db
        .select({ sealedKey: signers.sealedKey })
        .from(signers)
        .where(and(eq(signers.tenantId, tenantId), eq(signers.chain, chain), eq(signers.address, canonical(chain, address))))
        .limit(1);
      return row ? openSecret(row.sealedKey, secretsKey) : null;
    },
  };
}
