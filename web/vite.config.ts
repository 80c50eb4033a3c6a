import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// The build lands in gateway/webui/dist, embedded by the gateway (webui.go)
// and committed; `make web` rebuilds it and CI checks it is not stale, so
// the output must be the same bytes for the same source.
export default defineConfig({
  base: '/wunder/web/',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false })],
  build: {
    outDir: '../gateway/webui/dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    sourcemap: false,
    assetsInlineLimit: 0,
  },
  server: {
    proxy: { '/wunder/auth': 'http://127.0.0.1:8000', '/wunder/admin': 'http://127.0.0.1:8000' },
  },
});
