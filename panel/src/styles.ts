// Themable from the page through CSS custom properties (and ::part for anything more).
export const STYLES = `
:host{display:block;font:var(--loyalty-font,inherit);color:var(--loyalty-fg,#1f2328);background:var(--loyalty-bg,#fff);
border:1px solid var(--loyalty-border,#d0d7de);border-radius:var(--loyalty-radius,12px);padding:var(--loyalty-padding,1rem)}
h2{font-size:1rem;margin:1rem 0 .5rem}
.balance{font-size:1.75rem;font-weight:700;margin:0}
.muted{color:var(--loyalty-muted,#59636e);font-size:.875rem}
progress{width:100%;accent-color:var(--loyalty-accent,#0969da)}
ul{list-style:none;margin:0;padding:0}
li{display:flex;justify-content:space-between;align-items:center;gap:.5rem;padding:.4rem 0;border-top:1px solid var(--loyalty-border,#d0d7de)}
button{font:inherit;cursor:pointer;border:0;border-radius:var(--loyalty-radius,12px);padding:.35rem .8rem;
background:var(--loyalty-accent,#0969da);color:var(--loyalty-accent-fg,#fff)}
button:disabled{cursor:not-allowed;opacity:.45}
.code{font-family:ui-monospace,monospace;font-size:1.1rem;font-weight:700}
[role=alert]{color:var(--loyalty-error,#cf222e)}
.plus{color:var(--loyalty-success,#1a7f37)}
`;
