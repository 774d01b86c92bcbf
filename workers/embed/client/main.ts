import { embedApi } from "./api.ts";
import type { WidgetBoot } from "./boot.ts";
import { startFlow } from "./flow.ts";
import { parentChannel } from "./parent.ts";
import { injectedWallets } from "./wallets/evm-injected.ts";
import { tonConnectOption } from "./wallets/ton.ts";
import type { WalletOption } from "./wallets/wallet.ts";
import { walletConnectOption } from "./wallets/walletconnect.ts";

/** An SVG QR code of `text`, from the same generator the hosted repayment page uses (loaded when a pairing link is shown). */
async function qrSvg(text: string): Promise<string> {
  const { default: qrcode } = await import("qrcode-generator");
  const q = qrcode(0, "M");
  q.addData(text);
  q.make();
  return q.createSvgTag({ cellSize: 4, margin: 2, scalable: true });
}

/** The ways to connect for the program's chain family. */
function walletsFor(boot: WidgetBoot, onChange: (options: WalletOption[]) => void): WalletOption[] {
  const name = boot.config.branding.companyName ?? boot.config.program.name;
  if (boot.family === "TON") return [tonConnectOption(boot.tonManifestUrl, boot.config.chain !== "TON")];
  if (boot.family !== "EVM" || boot.evmChainId === null) return [];
  const extra = boot.walletConnectProjectId ? [walletConnectOption(boot.walletConnectProjectId, boot.evmChainId, name)] : [];
  return [...injectedWallets((injected) => onChange([...injected, ...extra])), ...extra];
}

const boot = JSON.parse(document.getElementById("widget-boot")!.textContent!) as WidgetBoot;
const parent = parentChannel(boot.parentOrigin);
parent.autoResize();
startFlow({
  boot,
  api: embedApi(boot.apiBase),
  parent,
  root: document.getElementById("app")!,
  status: document.getElementById("status")!,
  wallets: (onChange) => walletsFor(boot, onChange),
  qrSvg,
});
parent.post({ type: "svc:ready" });
