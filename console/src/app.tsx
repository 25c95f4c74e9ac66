import { LoyaltyApiError, type LoyaltyClient } from '@loyalty-api/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { ClientProvider } from './lib/api';
import { errorText } from './lib/errors';
import { isAreaRoute } from './lib/areas';
import { useRoute } from './lib/router';
import { AreaLinks, AreaPage } from './routes/area-page';
import { useShopName } from './routes/programme/shop-settings';
import { clientFor, forgetToken, readToken, storeToken, takeTokenFromFragment } from './lib/session';
import { CustomerPage } from './routes/customer/customer-page';
import { CustomerListPage } from './routes/customers/customer-list-page';
import { OverviewPage } from './routes/overview/overview-page';
import { SignInPage } from './routes/sign-in/sign-in-page';

interface Session {
  client: LoyaltyClient;
  shopName: string;
  shop: unknown;
}

/** Checks a token by reading the shop; keeps it (this tab only) when the API takes it. */
async function signIn(token: string): Promise<Session> {
  const client = clientFor(token);
  try {
    const { data: shop } = await client.GET('/merchant_api/v1/shop');
    storeToken(token);
    return { client, shopName: shop.name, shop };
  } catch (e) {
    // A token that may not read the shop is still the shop's: its pages say what it may not do.
    if (!(e instanceof LoyaltyApiError && e.code === 'insufficient_scope')) throw e;
    storeToken(token);
    return { client, shopName: 'Loyalty console', shop: undefined };
  }
}

export function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [checking, setChecking] = useState(true);
  const [queries] = useState(() => new QueryClient({ defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false } } }));

  const attempt = async (token: string) => {
    setError(null);
    try {
      const session = await signIn(token);
      // The shop just read is the pages' too (the Overview's days are its time zone's): not read twice.
      if (session.shop) queries.setQueryData(['shop'], session.shop);
      setSession(session);
    } catch (e) {
      forgetToken();
      setError(errorText(e));
    }
  };

  useEffect(() => {
    const token = takeTokenFromFragment() ?? readToken();
    void (token ? attempt(token) : Promise.resolve()).finally(() => setChecking(false));
  }, []);

  const signOut = () => {
    forgetToken();
    queries.clear();
    setSession(null);
  };

  if (checking) return <p className="loading">Loading…</p>;
  if (!session) return <SignInPage onSignIn={attempt} error={error} />;
  return (
    <QueryClientProvider client={queries}>
      <ClientProvider client={session.client}>
        <Shell shopName={session.shopName} onSignOut={signOut} />
      </ClientProvider>
    </QueryClientProvider>
  );
}

function Shell({ shopName, onSignOut }: { shopName: string; onSignOut: () => void }) {
  const route = useRoute();
  const name = useShopName(shopName);
  return (
    <>
      <header className="top">
        <span className="brand">{name}</span>
        <nav aria-label="Console">
          <a href="#/" aria-current={route.page === 'overview' ? 'page' : undefined}>
            Overview
          </a>
          <a href="#/customers" aria-current={route.page === 'customers' ? 'page' : undefined}>
            Customers
          </a>
          <AreaLinks page={route.page} />
        </nav>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        {isAreaRoute(route) ? (
          <AreaPage route={route} />
        ) : route.page === 'customer' ? (
          <CustomerPage identifier={route.identifier} />
        ) : route.page === 'customers' ? (
          <CustomerListPage />
        ) : (
          <OverviewPage />
        )}
      </main>
    </>
  );
}
