// What a person types as a start URL, checked before any request is made. The rule itself is discovery's; a
// refusal here is the person's input, so it becomes invalid-arguments (not a network error).
import { normalizeStartUrl as normalize } from '../engine/discovery/discover.ts';
import { NetworkError } from '../engine/http/index.ts';
import { InvalidArgumentsError } from './errors.ts';

export function normalizeStartUrl(input: string): string {
  try {
    return normalize(input);
  } catch (error) {
    if (error instanceof NetworkError) throw new InvalidArgumentsError(error.message);
    throw error;
  }
}
