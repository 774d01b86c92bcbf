import { accountChanges } from "./evm-injected.ts";
import type { WalletOption, WalletSession } from "./wallet.ts";

/**
 * WalletConnect (v2 sign protocol through WalletConnect's own
 * UniversalProvider, loaded only when this option is used): the pairing URI
 * is shown as a QR code and a deep link, and the session signs the widget's texts
 * with `personal_sign` on the program's chain.
 */
export function walletConnectOption(projectId: string, chainId: number, appName: string): WalletOption {
  return {
    id: "walletconnect",
    name: "WalletConnect",
    icon: null,
    async connect(ui): Promise<WalletSession> {
      const { default: UniversalProvider } = await import("@walletconnect/universal-provider");
      const provider = await UniversalProvider.init({
        projectId,
        // No telemetry to WalletConnect's pulse endpoint about the borrower's session.
        telemetryEnabled: false,
        metadata: { name: appName, description: `${appName} credit`, url: location.origin, icons: [] },
      });
      provider.on("display_uri", (uri: string) => ui.showPairing(uri, "your WalletConnect wallet"));
      const chain = `eip155:${chainId}`;
      const session = await provider.connect({
        optionalNamespaces: { eip155: { methods: ["personal_sign"], chains: [chain], events: ["accountsChanged", "chainChanged"] } },
      });
      const account = session?.namespaces.eip155?.accounts[0];
      if (!account) throw new Error("The wallet did not share an account on this chain");
      const address = account.split(":")[2]!;
      const hex = (text: string) => `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("")}`;
      return {
        address,
        name: "WalletConnect",
        signMessage: async (message) => ({
          walletSignature: await provider.request<string>({ method: "personal_sign", params: [hex(message), address] }, chain),
        }),
        // The provider re-emits the wallet's session events as EIP-1193's (an account may keep its `eip155:<id>:` prefix).
        onAccountChange: (listener) => accountChanges(provider as never, (account) => listener(account?.split(":").pop() ?? null)),
      };
    },
  };
}
