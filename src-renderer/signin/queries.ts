// Signing in to a Source, and reading again what it refused once the sign-in is kept.
import { useMutation, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { getBridge } from '../bridge/index.ts';
import { signInNeeded } from '../bridge/errors.ts';

/**
 * Every query that failed because `origin` asked for a sign-in is read again: those on screen at once, the others
 * when next shown. No Retry needed.
 */
export function readRefusedAgain(client: QueryClient, origin: string): Promise<void> {
  return client.invalidateQueries({ predicate: (q) => q.state.status === 'error' && signInNeeded(q.state.error)?.origin === origin });
}

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (args: { url: string } & ({ user: string; password: string } | { token: string })) => getBridge().invoke('sources.signIn', args),
    onSuccess: (result) => void readRefusedAgain(client, result.signIn.origin),
  });
}
