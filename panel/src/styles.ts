// Themable from the page through CSS custom properties (and ::part for anything more).
export const STYLES = `
:host{display:block;font:var(--loyalty-font,inherit);color:var(--loyalty-fg,#1f2328);background:var(--loyalty-bg,#fff);
border:1px solid var(--loyalty-border,#d0d7de);border-radius:var(--loyalty-radius,12px);padding:var(--loyalty-padding,1rem);overflow-wrap:anywhere}
h2{font-size:1rem;margin:1rem 0 .5rem}
.balance{font-size:1.75rem;font-weight:700;margin:0}
.muted{color:var(--loyalty-muted,#59636e);font-size:.875rem}
progress{width:100%;accent-color:var(--loyalty-accent,#0969da)}
ul{list-style:none;margin:0;padding:0}
li{display:flex;justify-content:space-between;align-items:center;gap:.5rem;padding:.4rem 0;border-top:1px solid var(--loyalty-border,#d0d7de)}
li>span{min-width:0}
.row{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem}
button{font:inherit;cursor:pointer;border:0;border-radius:var(--loyalty-radius,12px);padding:.35rem .8rem;flex:none;
background:var(--loyalty-accent,#0969da);color:var(--loyalty-accent-fg,#fff)}
button.secondary{background:transparent;color:var(--loyalty-fg,#1f2328);border:1px solid var(--loyalty-border,#d0d7de)}
button:disabled{cursor:not-allowed;opacity:.45}
button:focus-visible,a:focus-visible,input:focus-visible{outline:2px solid var(--loyalty-accent,#0969da);outline-offset:2px}
input{font:inherit;padding:.3rem .4rem;border:1px solid var(--loyalty-border,#8c959f);border-radius:6px}
a{color:var(--loyalty-link,#0969da)}
dialog{max-width:min(28rem,calc(100vw - 2rem));border:1px solid var(--loyalty-border,#d0d7de);border-radius:var(--loyalty-radius,12px);
color:var(--loyalty-fg,#1f2328);background:var(--loyalty-bg,#fff)}
dialog::backdrop{background:rgba(0,0,0,.4)}
.actions{display:flex;flex-wrap:wrap;justify-content:flex-end;gap:.5rem}
.badge{font-size:.75rem;padding:0 .4rem;border-radius:1rem;background:var(--loyalty-accent,#0969da);color:var(--loyalty-accent-fg,#fff)}
.code{font-family:ui-monospace,monospace;font-size:1.1rem;font-weight:700}
[role=alert]{color:var(--loyalty-error,#cf222e)}
[role=alert]:empty{display:none}
.plus{color:var(--loyalty-success,#1a7f37)}
`;
