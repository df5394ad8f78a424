/** The webview's document under a strict CSP: our own files only, the script by nonce, no command URIs. */

import * as vscode from "vscode";
import { PRODUCT_NAME } from "../shared/format";

function bundleRoot(extensionUri: vscode.Uri): vscode.Uri {
  return vscode.Uri.joinPath(extensionUri, "dist", "webview");
}

export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [bundleRoot(extensionUri)],
  };
}

function nonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 32; i++) s += chars[Math.floor(Math.random() * chars.length)];
  return s;
}

function documentLanguage(): string {
  return /^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$/.test(vscode.env.language) ? vscode.env.language : "en";
}

/** A JSON data block (not executed, so no nonce) with every `<` escaped so it cannot end the element. */
function l10nBlock(): string {
  const bundle = vscode.l10n.bundle;
  if (!bundle) return "";
  return `<script type="application/json" id="pi-context-l10n">${JSON.stringify(bundle).replace(/</g, "\\u003c")}</script>\n`;
}

export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, kind: "panel" | "view"): string {
  const root = bundleRoot(extensionUri);
  const uri = (f: string) => webview.asWebviewUri(vscode.Uri.joinPath(root, f)).toString();
  const n = nonce();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${n}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="${documentLanguage()}">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri("codicon.css")}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${uri("panel.css")}">
<title>${PRODUCT_NAME}</title>
</head>
<body data-host="${kind}">
<div id="app" role="main"><p class="loading">${vscode.l10n.t("Loading…")}</p></div>
${l10nBlock()}<script type="module" nonce="${n}" src="${uri("main.js")}"></script>
</body>
</html>`;
}
