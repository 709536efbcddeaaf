// The application menu. Standard roles keep platform conventions (macOS app menu, Edit shortcuts).
import { app, Menu, shell, type MenuItemConstructorOptions } from 'electron';

const SPEC_URL = 'https://www.openarchives.org/rs/1.1/resourcesync';
const NOTIFICATION_SPEC_URL = 'https://www.openarchives.org/rs/notification/1.0.1/notification';

export function installMenu(): void {
  const isMac = process.platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    { label: 'File', submenu: [isMac ? { role: 'close' } : { role: 'quit' }] },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { role: 'reload' },
        { role: 'toggleDevTools' },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
      ],
    },
    { role: 'windowMenu' },
    {
      role: 'help',
      submenu: [
        { label: 'ResourceSync Framework Specification', click: () => void shell.openExternal(SPEC_URL) },
        { label: 'ResourceSync Change Notification', click: () => void shell.openExternal(NOTIFICATION_SPEC_URL) },
        ...(isMac ? [] : [{ type: 'separator' as const }, { label: `About ${app.getName()}`, role: 'about' as const }]),
      ],
    },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}
