import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { writeTinyGguf } from './tiny-gguf/write-tiny-gguf.js';

/**
 * Writes the tiny random-weight test model (llama architecture, ChatML template with tools):
 *   npm run make-tiny-gguf -- [path]      (default: models/tiny.gguf)
 * Nothing is downloaded; the same seed always writes the same file.
 */
const path = resolve(process.argv[2] ?? 'models/tiny.gguf');
mkdirSync(dirname(path), { recursive: true });
const bytes = writeTinyGguf(path);
process.stdout.write(`wrote ${path} (${(bytes / 1024).toFixed(0)} KiB)\n`);
