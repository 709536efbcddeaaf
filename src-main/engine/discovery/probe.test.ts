import { describe, expect, it } from 'vitest';
import { documentName, looksLikeHtml } from './probe.ts';

const b = (text: string) => Buffer.from(text);

describe('looksLikeHtml', () => {
  it('goes by the markup, not the Content-Type', () => {
    expect(looksLikeHtml(b('<?xml version="1.0"?>\n<urlset xmlns="x"/>'), 'text/html')).toBe(false);
    expect(looksLikeHtml(b('\ufeff  <!-- hi --><urlset/>'), 'text/html; charset=utf-8')).toBe(false);
    expect(looksLikeHtml(b('<!DOCTYPE html><html>'), 'application/xml')).toBe(true);
    expect(looksLikeHtml(b('<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0//EN" "x"><html>'), 'application/xhtml+xml')).toBe(true);
    expect(looksLikeHtml(b('\n<HTML lang="en">'), undefined)).toBe(true);
  });

  it('falls back to the Content-Type when there is no markup to go by', () => {
    expect(looksLikeHtml(b('Hello'), 'text/html')).toBe(true);
    expect(looksLikeHtml(b('Hello'), 'text/plain')).toBe(false);
    expect(looksLikeHtml(b(''), undefined)).toBe(false);
  });
});

describe('documentName', () => {
  it('names documents as the spec does', () => {
    expect(documentName({ capability: 'resourcelist', isIndex: true })).toBe('Resource List Index');
    expect(documentName({ capability: 'changedump-manifest', isIndex: false })).toBe('Change Dump Manifest');
    expect(documentName({ capability: 'description', isIndex: false })).toBe('Source Description');
  });
});
