#!/usr/bin/env node
// The todoharness launcher of the npm package `todoharness`: it runs the
// binary of this platform, which npm installed as one of the package's
// optional dependencies (@todoharness/cli-<os>-<cpu>, each limited to its
// platform by its os and cpu fields: npm installs only the one that fits).
// Nothing is downloaded, here or at install: the package has no install
// script. Arguments, stdio and the exit status pass through; SIGINT,
// SIGTERM and SIGHUP are passed on to the binary.
"use strict";

const { spawn } = require("node:child_process");

const platforms = {
  "linux x64": "@todoharness/cli-linux-x64",
  "linux arm64": "@todoharness/cli-linux-arm64",
  "darwin x64": "@todoharness/cli-darwin-x64",
  "darwin arm64": "@todoharness/cli-darwin-arm64",
  "win32 x64": "@todoharness/cli-win32-x64",
  "win32 arm64": "@todoharness/cli-win32-arm64",
};

const key = `${process.platform} ${process.arch}`;
const pkg = platforms[key];
if (!pkg) {
  console.error(`todoharness: no binary for ${key} (there are: ${Object.keys(platforms).join(", ")}); go install github.com/todoharness/todoharness/cmd/todoharness@latest builds one`);
  process.exit(2);
}
const exe = process.platform === "win32" ? "todoharness.exe" : "todoharness";
let bin;
try {
  bin = require.resolve(`${pkg}/bin/${exe}`);
} catch (err) {
  console.error(`todoharness: ${pkg}, the binary for ${key}, is not installed: npm installs it as an optional dependency of todoharness, unless optional dependencies are left out (--omit=optional, --no-optional); install it with npm install ${pkg}`);
  process.exit(2);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    try {
      child.kill(sig);
    } catch {
      // it has exited already
    }
  });
}
child.on("error", (err) => {
  console.error(`todoharness: cannot run ${bin}: ${err.message}`);
  process.exit(2);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what the binary saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
