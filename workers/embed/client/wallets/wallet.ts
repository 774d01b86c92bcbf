/** What the wallet adds to a signed message: the signature, and for TON Connect its key, timestamp and domain. */
export type MessageSignature = { walletSignature: string; publicKey?: string; timestamp?: number; domain?: string };

/**
 * A connected wallet: its address and the one thing the widget asks of it,
 * signing a text (the wallet-session challenge, then each draw's agreement).
 */
export type WalletSession = {
  /** The address the API is called with (TON: raw `0:…`). */
  address: string;
  /** The address as the borrower's wallet shows it, when it differs (TON: user-friendly). */
  displayAddress?: string;
  name: string;
  signMessage(message: string): Promise<MessageSignature>;
  /**
   * Calls `listener` with the account the wallet uses from now on (null: it disconnected) whenever that changes;
   * returns a function that stops listening.
   */
  onAccountChange?(listener: (account: string | null) => void): () => void;
};

/** Shows a pairing link (WalletConnect or TON Connect) as a QR code and a deep link while the wallet connects. */
export type PairingUi = { showPairing(uri: string, walletName: string): void };

/** A way to connect offered on the first screen. */
export type WalletOption = { id: string; name: string; icon: string | null; connect(ui: PairingUi): Promise<WalletSession> };
