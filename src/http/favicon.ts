// The server's icon: browsers ask every server for /favicon.ico, and a 404 there is an error in
// their console. A small SVG (bars of a build chart), sent with the SVG type, which browsers accept.

export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4e79"/><rect x="6" y="18" width="5" height="8" fill="#8fd18f"/><rect x="13.5" y="12" width="5" height="14" fill="#8fd18f"/><rect x="21" y="6" width="5" height="20" fill="#e07a5f"/></svg>';
