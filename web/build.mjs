// Bundles src/app.ts into dist/app.js (one file, no eval, no inline code: the web edge's CSP
// allows scripts and styles from 'self' only) and copies index.html and app.css beside it.
// `--tests` bundles test/*.test.ts into test-dist/ for node's own test runner instead.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";

if (process.argv.includes("--tests")) {
  rmSync("test-dist", { recursive: true, force: true });
  const entries = readdirSync("test").filter((f) => f.endsWith(".test.ts")).map((f) => `test/${f}`);
  await build({
    entryPoints: entries, bundle: true, platform: "node", format: "esm", outdir: "test-dist",
    outExtension: { ".js": ".mjs" }, logLevel: "warning",
  });
} else {
  rmSync("dist", { recursive: true, force: true });
  mkdirSync("dist");
  await build({
    entryPoints: ["src/app.ts"], bundle: true, format: "esm", target: "es2020", minify: true,
    sourcemap: false, outfile: "dist/app.js", logLevel: "warning", legalComments: "none",
  });
  copyFileSync("src/index.html", "dist/index.html");
  copyFileSync("src/app.css", "dist/app.css");
}
