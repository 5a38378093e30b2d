// Builds the review page into dist/admin-ui, which `serve --ui` hands out as static files.
// Preact's JSX goes through Vite's own Oxc transform, so no Babel-based preset is needed.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here("."),
  // relative asset URLs: the page works wherever the server mounts it
  base: "./",
  publicDir: false,
  logLevel: "warn",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  // `npx vite --config admin/ui/vite.config.ts` for work on the page: API calls and the event
  // stream go to a running `infinity-memory serve --ui` (default port 7413, or IMEM_UI_API)
  server: {
    host: "127.0.0.1",
    proxy: { "/api": { target: process.env.IMEM_UI_API ?? "http://127.0.0.1:7413", changeOrigin: false } },
  },
  build: {
    outDir: here("../../dist/admin-ui"),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: true,
    // one small bundle; nothing fetched from elsewhere at run time
    assetsInlineLimit: 0,
  },
});
