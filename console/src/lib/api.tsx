import type { LoyaltyClient } from '@loyalty-api/client';
import { createContext, useContext, type ReactNode } from 'react';

// The one client every page's data hooks use (medusa's dashboard: hooks over one client).

const ClientContext = createContext<LoyaltyClient | null>(null);

export function ClientProvider({ client, children }: { client: LoyaltyClient; children: ReactNode }) {
  return <ClientContext.Provider value={client}>{children}</ClientContext.Provider>;
}

export function useClient(): LoyaltyClient {
  const client = useContext(ClientContext);
  if (!client) throw new Error('useClient outside a signed-in console');
  return client;
}
