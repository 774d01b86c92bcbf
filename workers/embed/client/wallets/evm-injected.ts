import { createStore, type EIP6963ProviderDetail } from "mipd";
import { createClient, custom, type EIP1193Provider } from "viem";
import { requestAddresses, signMessage } from "viem/actions";
import type { WalletOption, WalletSession } from "./wallet.ts";

/** A session over an EIP-1193 provider: the address it grants, and EIP-191 `personal_sign` of the texts the widget signs. */
export async function evmSession(provider: EIP1193Provider, name: string): Promise<WalletSession> {
  // A bare client with only the two actions used (tree-shaken: the widget's entry stays small).
  const client = createClient({ transport: custom(provider) });
  const [address] = await requestAddresses(client);
  if (!address) throw new Error("The wallet did not share an account");
  return {
    address,
    name,
    signMessage: async (message) => ({ walletSignature: await signMessage(client, { account: address, message }) }),
    onAccountChange: (listener) => accountChanges(provider, listener),
  };
}

/** EIP-1193 `accountsChanged` (the first account is the one in use; none: disconnected) and `disconnect`. */
export function accountChanges(provider: Pick<EIP1193Provider, "on" | "removeListener">, listener: (account: string | null) => void): () => void {
  const changed = (accounts: readonly string[]) => listener(accounts[0] ?? null);
  const disconnected = () => listener(null);
  provider.on("accountsChanged", changed);
  provider.on("disconnect", disconnected);
  return () => {
    provider.removeListener("accountsChanged", changed);
    provider.removeListener("disconnect", disconnected);
  };
}

const option = (detail: EIP6963ProviderDetail): WalletOption => ({
  id: `eip6963:${detail.info.uuid}`,
  name: detail.info.name,
  icon: /^data:image\/(svg\+xml|png|webp|jpeg|gif)[;,]/.test(detail.info.icon) ? detail.info.icon : null,
  connect: () => evmSession(detail.provider as EIP1193Provider, detail.info.name),
});

/**
 * Injected EVM wallets: every wallet announced through EIP-6963 (mipd's
 * store, the discovery wagmi uses), and `window.ethereum` when no wallet
 * announces itself. `onChange` runs when a wallet announces itself late.
 */
export function injectedWallets(onChange: (options: WalletOption[]) => void): WalletOption[] {
  const store = createStore();
  const list = (): WalletOption[] => {
    const announced = store.getProviders().map(option);
    const legacy = (window as { ethereum?: EIP1193Provider }).ethereum;
    if (announced.length === 0 && legacy) {
      return [{ id: "injected", name: "Browser wallet", icon: null, connect: () => evmSession(legacy, "Browser wallet") }];
    }
    return announced;
  };
  store.subscribe(() => onChange(list()));
  return list();
}
