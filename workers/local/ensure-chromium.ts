import { existsSync } from "node:fs";

/**
 * `npm test`'s pretest: the browser tests drive Debian's Chromium
 * (`$CHROMIUM_PATH`, default /usr/bin/chromium), never a Playwright download.
 * When it is missing, installs Debian's `chromium` package with apt (as root,
 * or through passwordless sudo); otherwise says how and fails, since the
 * browser tests would fail anyway.
 */
const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!existsSync(path)) {
  const root = process.getuid?.() === 0;
  const install = "apt-get update && apt-get install -y --no-install-recommends chromium";
  console.log(`Chromium not found at ${path}: installing Debian's chromium package (${install})…`);
  const proc = Bun.spawn(root ? ["sh", "-c", install] : ["sudo", "-n", "sh", "-c", install], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await proc.exited) !== 0 || !existsSync(path)) {
    console.error(`Could not install Chromium. Install it yourself (\`sudo apt-get install -y chromium\`) or set CHROMIUM_PATH to a Chromium binary.`);
    process.exit(1);
  }
}
