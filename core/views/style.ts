// The app's look on top of the pages' (core/http/pages/layout.ts): the same
// variables, light and dark, phone first, 44 px targets and visible focus.
export const APP_STYLE = `
.visually-hidden{position:absolute!important;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
header.site{max-width:72rem}
.approw{max-width:72rem;margin:0 auto;padding:.5rem 1rem 0;display:grid;grid-template-columns:minmax(0,1fr);align-items:center;gap:.25rem 1rem;border-bottom:1px solid var(--line)}
.approw .find{margin:0;position:relative}
.find-results{position:absolute;left:0;right:0;top:calc(100% + .25rem);z-index:20;max-height:70vh;overflow-y:auto;background:var(--bg);border:1px solid var(--line);border-radius:.5rem;box-shadow:0 .5rem 1.5rem rgb(0 0 0/.2);padding:.25rem 0}
.find-title{margin:.5rem .8rem .2rem;font-size:.85rem;font-weight:600;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.find-item,.find-all{display:flex;flex-direction:column;padding:.45rem .8rem;min-height:2.75rem;justify-content:center;text-decoration:none;color:var(--fg)}
.find-item.on,.find-item:hover,.find-all:hover{background:color-mix(in srgb,var(--accent) 14%,transparent)}
.find-all{border-top:1px solid var(--line);color:var(--accent);font-weight:600}
.find-results .state{padding:.5rem .8rem;margin:0}
.approw .find input{width:100%;max-width:none}
.approw .screens{overflow-x:auto;margin:0 -1rem;padding:0 1rem}
.approw .screens ul{display:flex;gap:.25rem;list-style:none;margin:0;padding:0;white-space:nowrap}
.approw .screens a{display:inline-flex;align-items:center;min-height:2.75rem;padding:0 .7rem;text-decoration:none;color:var(--fg);border-bottom:3px solid transparent}
.approw .screens a:hover{color:var(--accent)}
.approw .screens a[aria-current=page]{border-bottom-color:var(--accent);font-weight:600}
@media (min-width:48rem){.approw{grid-template-columns:minmax(12rem,16rem) minmax(0,1fr)}}
main.wide{max-width:72rem}
input[type=search],textarea{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid var(--muted);border-radius:.4rem;background:var(--field);color:var(--fg);min-height:2.75rem}
textarea{font:1rem/1.5 ui-monospace,SFMono-Regular,Menlo,monospace;resize:vertical}
input[type=search]:focus-visible,textarea:focus-visible,button:focus-visible,[tabindex]:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
button.danger{background:var(--bad);border-color:var(--bad)}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}.row.end{justify-content:flex-end}.row.spread{justify-content:space-between}
.hint{color:var(--muted);font-size:.93rem}
.state{color:var(--muted);padding:1rem 0}.state-title{font-weight:600;color:var(--fg);margin:0 0 .25rem}
.empty{border:1px dashed var(--line);border-radius:.6rem;padding:1.25rem;text-align:center}
.failure{color:var(--fg);border-left:4px solid var(--bad);padding:.5rem .8rem;background:color-mix(in srgb,var(--bad) 10%,transparent)}
.spinner{display:inline-block;width:1em;height:1em;margin-right:.5em;vertical-align:-.15em;border:2px solid var(--line);border-top-color:var(--accent);border-radius:50%;animation:spin 1s linear infinite}
@keyframes spin{to{transform:rotate(1turn)}}
@media (prefers-reduced-motion:reduce){.spinner{animation:none}}
.search-list .items{list-style:none;margin:.5rem 0 0;padding:0}
.search-list .item{display:flex;flex-direction:column;align-items:flex-start;width:100%;text-align:left;background:transparent;color:var(--fg);border:0;border-bottom:1px solid var(--line);border-radius:0;padding:.6rem .5rem;font-weight:400}
.search-list .item:hover{background:color-mix(in srgb,var(--accent) 8%,transparent)}
.search-list .item.on{background:color-mix(in srgb,var(--accent) 14%,transparent);box-shadow:inset 3px 0 var(--accent)}
.item-title{font-weight:600;overflow-wrap:anywhere}.item-detail{color:var(--muted);font-size:.9rem}
.tabs{display:flex;gap:.25rem}
.tab{background:transparent;color:var(--fg);border:1px solid var(--line);padding:.3rem .8rem}
.tab.on{border-color:var(--accent);color:var(--accent)}
.md-label{margin:0}
.md-preview{border:1px solid var(--line);border-radius:.4rem;padding:.25rem 1rem;min-height:12rem;background:var(--field)}
.prose img{max-width:100%}.prose pre{overflow-x:auto}
.toasts{position:fixed;left:50%;bottom:1rem;transform:translateX(-50%);display:flex;flex-direction:column;gap:.5rem;width:min(32rem,calc(100% - 2rem));z-index:10}
.toast{display:flex;align-items:center;gap:.5rem;padding:.25rem .25rem .25rem 1rem;border-radius:.5rem;background:var(--fg);color:var(--bg);box-shadow:0 .3rem 1rem rgb(0 0 0/.25)}
.toast span{flex:1}.toast button.quiet{color:var(--bg);border-color:transparent}
.toast.bad{background:var(--bad)}
.toast .close{font-size:1.3rem;padding:0;width:2.75rem}
dialog.confirm{border:1px solid var(--line);border-radius:.6rem;background:var(--bg);color:var(--fg);padding:1rem 1.25rem;max-width:min(28rem,calc(100% - 2rem))}
dialog.confirm h2{margin:.25rem 0 .5rem}
dialog::backdrop{background:rgb(0 0 0/.45)}
dl.keys{display:grid;grid-template-columns:max-content 1fr;gap:.4rem 1rem}dl.keys dd{margin:0}
kbd{font:.9rem ui-monospace,monospace;border:1px solid var(--line);border-bottom-width:2px;border-radius:.3rem;padding:.05rem .4rem}
.split{display:grid;gap:1rem 2rem;align-items:start}
.pane-title{margin:0;font-size:1.2rem}
.toolbar{margin:0 0 .5rem;min-height:2.75rem}
.save-status{color:var(--muted);font-size:.93rem}.save-status.bad{color:var(--bad)}
input.title-field{font-size:1.2rem;font-weight:600;max-width:none}
@media (min-width:48rem){.split{grid-template-columns:minmax(15rem,21rem) 1fr}.split .back{visibility:hidden}}
@media (max-width:47.99rem){.split.editing>.list,.split:not(.editing)>.editor{display:none}}
.offline{position:sticky;top:0;z-index:5;margin:0 0 1rem;padding:.6rem .8rem;border-left:4px solid var(--bad);background:var(--bg);box-shadow:inset 0 0 0 100vmax color-mix(in srgb,var(--bad) 12%,transparent)}
`;
