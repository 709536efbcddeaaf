// Error replies quote a bounded slice of what they were given, however long the input.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MESSAGE_CHARS } from '../engine/clip.ts';
import { openStore } from '../store/store.ts';
import { createService } from './service.ts';

describe('error replies', () => {
  it('stay a readable size whatever they quote', async () => {
    const service = createService({ store: openStore(':memory:'), adapter: 'http', version: '0', log: () => undefined });
    // A server that answers every path with an HTML page without links: discovery tries every route and
    // quotes the (8,000-character) URL in each.
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><html><head></head><body></body></html>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${'a'.repeat(8_000)}`;
      const added = await service.dispatch('sources.add', { url, runId: 'r' });
      expect(added.ok).toBe(false);
      const message = (added as { error: { message: string } }).error.message;
      expect(message.length).toBeLessThanOrEqual(MESSAGE_CHARS + 50);
      expect(message).toMatch(/characters left out/);

      const bad = await service.dispatch('documents.summary', { url: `ftp://${'b'.repeat(100_000)}` });
      expect(bad.ok).toBe(false);
      expect((bad as { error: { message: string } }).error.message.length).toBeLessThanOrEqual(MESSAGE_CHARS + 50);
    } finally {
      server.closeAllConnections();
      server.close();
      await service.close();
    }
  });
});
