// What a person types as a start URL, checked before any request is made. The rule itself is discovery's; a
// refusal here is the person's input, so it becomes invalid-arguments (not a network error).
import { normalizeStartUrl as normalize } from '../engine/discovery/discover.ts';
import { NetworkError } from '../engine/http/index.ts';
import { splitUserinfo } from '../engine/http/userinfo.ts';
import { InvalidArgumentsError } from './errors.ts';

/** `credentialsHow`: where this caller takes credentials instead, said when the URL carries some. */
export function normalizeStartUrl(input: string, credentialsHow = 'separately'): string {
  let url: string;
  try {
    url = normalize(input);
  } catch (error) {
    if (error instanceof NetworkError) throw new InvalidArgumentsError(error.message);
    throw error;
  }
  // A user name and password in the URL are not sent by the client, and the URL is saved and shown as it is: they
  // are refused, and the message names the URL without them.
  const userinfo = splitUserinfo(url);
  if (userinfo !== null) {
    throw new InvalidArgumentsError(
      `The URL has a user name and password in it, which are not sent and would be kept and shown with it: give ${userinfo.url} without them, and the credentials ${credentialsHow}.`,
    );
  }
  return url;
}
