import { useQueryClient } from '@tanstack/react-query';
import { ConfirmButton } from '../../components/confirm-button';
import { useClient } from '../../lib/api';
import { leaveNotice } from '../../lib/notice';

/** Save a document as a file the browser downloads. */
function download(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** "Export" (the customer's JSON export, as a file) and "Erase" (the erasure API), each after a confirmation. */
export function CustomerData({ identifier, name, remoteId }: { identifier: string; name: string; remoteId: number }) {
  const client = useClient();
  const queries = useQueryClient();
  const path = { customer_identifier: identifier };

  const exportData = async () => {
    const { data } = await client.GET('/merchant_api/v1/customers/{customer_identifier}/export', { params: { path } });
    download(`customer-${remoteId}.json`, new Blob([JSON.stringify({ data }, null, 2)], { type: 'application/json' }));
  };
  const erase = async () => {
    await client.DELETE('/merchant_api/v1/customers/{customer_identifier}', { params: { path } });
    // Nothing cached shows the person again: the list loads afresh.
    queries.removeQueries({ queryKey: ['customer', identifier] });
    queries.removeQueries({ queryKey: ['customers'] });
    leaveNotice(`${name} was erased: their personal data is gone, their ledger stays under an anonymous customer.`);
    window.location.hash = '#/customers';
  };

  return (
    <section aria-labelledby="data-heading">
      <h2 id="data-heading">Customer data</h2>
      <p className="muted">Everything stored about the customer as one JSON file, or their erasure (a data or redaction request).</p>
      <div className="toolbar">
        <ConfirmButton
          label="Export"
          name={`Export ${name}'s data`}
          title={`Export ${name}'s data?`}
          question="A JSON file with everything stored about the customer downloads to this computer: keep it as safely as the shop's own data."
          confirmLabel="Download export"
          onConfirm={exportData}
        />
        <ConfirmButton
          label="Erase"
          name={`Erase ${name}`}
          danger
          title={`Erase ${name}?`}
          question="Their e-mail, names, phone, birthday, referral code and notes are erased for good; their points history stays under an anonymous customer. It cannot be undone."
          confirmLabel="Erase customer"
          onConfirm={erase}
        />
      </div>
    </section>
  );
}
