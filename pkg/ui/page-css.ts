// The page's stylesheet, served as /assets/style.css. System fonts only (nothing fetched from elsewhere).

export const PAGE_CSS = `
:root { --bg: #fbfbfc; --fg: #1d2330; --muted: #667085; --line: #e3e6ec; --head: #f1f3f7;
  --ok: #1f883d; --ok-bg: #dcf5e3; --warn: #9a6700; --warn-bg: #fff3cd; --bad: #cf222e; --bad-bg: #ffe1e1;
  --info: #0969da; --info-bg: #ddeeff; --gray-bg: #eceef2; --row: 26px; --col: 140px; --first: 340px; }
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; background: var(--bg); color: var(--fg);
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { display: flex; align-items: center; gap: 16px; padding: 8px 16px; border-bottom: 1px solid var(--line);
  background: #fff; height: 44px; }
.brand { font-weight: 700; font-size: 15px; }
nav a { margin-right: 12px; color: var(--muted); text-decoration: none; padding: 4px 2px; }
nav a.active { color: var(--fg); border-bottom: 2px solid var(--info); }
.status { margin-left: auto; color: var(--muted); }
.status.live { color: var(--ok); }
.status.down { color: var(--bad); }
main { padding: 12px 16px; height: calc(100% - 44px); overflow: auto; }
main.matrix-view { overflow: hidden; display: flex; flex-direction: column; }
h2 { font-size: 15px; margin: 12px 0 8px; }
h3 { font-size: 13px; margin: 12px 0 6px; }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.muted { color: var(--muted); }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 8px; }
.filters label { display: flex; gap: 4px; align-items: center; color: var(--muted); }
select, input { font: inherit; padding: 2px 4px; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
.count { color: var(--muted); margin-left: auto; }
.matrix { position: relative; flex: 1; overflow: auto; border: 1px solid var(--line); background: #fff; }
.mrow { display: flex; height: var(--row); position: absolute; left: 0; }
.mhead { position: sticky; top: 0; z-index: 2; background: var(--head); height: var(--row); display: flex;
  font-weight: 600; }
.mcell, .mname { height: var(--row); line-height: var(--row); padding: 0 6px; white-space: nowrap; overflow: hidden;
  text-overflow: ellipsis; border-bottom: 1px solid var(--line); border-right: 1px solid var(--line); }
.mcell { width: var(--col); flex: none; font-size: 12px; }
.mname { width: var(--first); flex: none; position: sticky; left: 0; background: #fff; z-index: 1; }
.mhead .mname { background: var(--head); z-index: 3; }
.mname a { color: var(--fg); text-decoration: none; }
.mname a:hover { text-decoration: underline; }
.mname .kind { color: var(--muted); margin-right: 6px; }
.s-Applied { background: var(--ok-bg); color: var(--ok); }
.s-Pending, .s-Removing, .s-RequiredBy { background: var(--info-bg); color: var(--info); }
.s-Suspended, .s-Evicting { background: var(--warn-bg); color: var(--warn); }
.s-Failed, .s-Conflict, .s-Unreachable { background: var(--bad-bg); color: var(--bad); }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--head); font-weight: 600; }
.pill { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 12px; margin: 1px 4px 1px 0; }
.pill.True { background: var(--ok-bg); color: var(--ok); }
.pill.False { background: var(--bad-bg); color: var(--bad); }
.pill.Unknown { background: var(--gray-bg); color: var(--muted); }
.taint { background: var(--warn-bg); color: var(--warn); }
.bar { width: 140px; height: 8px; background: var(--gray-bg); border-radius: 4px; overflow: hidden; display: inline-block;
  vertical-align: middle; margin-right: 6px; }
.bar > span { display: block; height: 100%; background: var(--info); }
.bar.full > span { background: var(--bad); }
.diff td.old { color: var(--bad); } .diff td.new { color: var(--ok); }
.diff td { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; word-break: break-all; }
.override { color: var(--info); }
.copy { border: 1px solid var(--line); border-radius: 6px; margin: 10px 0; background: #fff; padding: 4px 10px 10px; }
.tabs button { font: inherit; border: 1px solid var(--line); background: #fff; padding: 3px 10px; margin-right: 4px;
  border-radius: 4px; cursor: pointer; }
.tabs button.active { background: var(--info-bg); border-color: var(--info); }
pre { background: var(--head); padding: 8px; overflow: auto; max-height: 420px; }
.error { color: var(--bad); }
`;
