import type { WalletOption, WalletSession } from "./wallet.ts";

/**
 * TON wallets through TON Connect (loaded only when this option is used): a
 * wallet injected in this browser connects directly; otherwise the universal
 * link of the known wallets' bridges is shown as a QR code and a deep link.
 * The wallet-session challenge and the agreement are signed with TON Connect
 * `signData` (text); the calls carry the wallet's public key, the signature's
 * timestamp and domain.
 */
export function tonConnectOption(manifestUrl: string, testnet: boolean): WalletOption {
  return {
    id: "tonconnect",
    name: "TON wallet",
    icon: null,
    async connect(ui): Promise<WalletSession> {
      const { default: TonConnect, CHAIN, isWalletInfoCurrentlyInjected, isWalletInfoRemote, toUserFriendlyAddress } = await import("@tonconnect/sdk");
      // No telemetry: by default (analytics mode "telemetry") the SDK batches events to
      // https://analytics.ton.org/events every 2 s (the widget's URL with the embed key, the
      // manifest URL, the wallet's app and state init, from which its address follows), a
      // third party the borrower never agreed to; offline it retries and logs errors.
      const connector = new TonConnect({ manifestUrl, analytics: { mode: "off" } });
      // The program's network: a wallet on the other one would get an address (v5 wallets) the loan can't reach.
      const network = testnet ? CHAIN.TESTNET : CHAIN.MAINNET;
      connector.setConnectionNetwork(network);
      await connector.restoreConnection();
      if (!connector.wallet) {
        const wallets = await connector.getWallets();
        const connected = new Promise<void>((resolve, reject) => {
          const stop = connector.onStatusChange(
            (wallet) => {
              if (wallet) {
                stop();
                resolve();
              }
            },
            (err) => reject(err),
          );
        });
        const injected = wallets.find(isWalletInfoCurrentlyInjected);
        if (injected) {
          connector.connect({ jsBridgeKey: injected.jsBridgeKey });
        } else {
          const bridges = wallets.filter(isWalletInfoRemote).map((w) => ({ bridgeUrl: w.bridgeUrl }));
          const unique = [...new Map(bridges.map((b) => [b.bridgeUrl, b])).values()];
          const link = connector.connect(unique);
          ui.showPairing(link, "your TON wallet");
        }
        await connected;
      }
      const wallet = connector.wallet!;
      if (wallet.account.chain !== network) {
        await connector.disconnect();
        throw new Error(`the wallet is on the other TON network; switch it to ${testnet ? "testnet" : "mainnet"}`);
      }
      if (!wallet.account.publicKey) throw new Error("the wallet did not share its public key, which signing needs");
      return {
        address: wallet.account.address,
        displayAddress: toUserFriendlyAddress(wallet.account.address, testnet),
        name: "TON wallet",
        async signMessage(message) {
          const signed = await connector.signData({ type: "text", text: message, network });
          return { walletSignature: signed.signature, publicKey: wallet.account.publicKey!, timestamp: signed.timestamp, domain: signed.domain };
        },
        onAccountChange: (listener) => connector.onStatusChange((next) => listener(next?.account.address ?? null)),
      };
    },
  };
}
