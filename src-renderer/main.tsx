import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { errorCode, followNewTokens, getBridge } from './bridge/index.ts';
import { App } from './app/App.tsx';
import './styles.css';

// Read (and hide) the session token before anything else looks at the address bar.
getBridge();

const client = new QueryClient({
  defaultOptions: {
    queries: {
      refetchOnWindowFocus: false,
      // A Source that answered 404 or sent a broken document will do so again; only transport hiccups are retried.
      retry: (failures, error) => failures < 1 && (errorCode(error) === 'transport' || errorCode(error) === 'network'),
      staleTime: 60_000,
    },
  },
});

followNewTokens(() => void client.invalidateQueries());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
