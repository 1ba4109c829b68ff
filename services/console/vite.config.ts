import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built to dist/ and served by the gateway under /console/, on the API's own origin.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1200 },
});
