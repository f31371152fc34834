/**
 * electron-builder `afterPack` hook: flips Electron's fuses in the packaged
 * binary (before electron-builder signs it), so the shipped app cannot be
 * turned into a general-purpose Node runtime or debugged into:
 *
 * - RunAsNode off: ELECTRON_RUN_AS_NODE=1 no longer makes the app a plain Node.
 * - NODE_OPTIONS and NODE_EXTRA_CA_CERTS ignored; --inspect and SIGUSR1 ignored.
 * - The app code loads only from app.asar, and that archive's integrity is
 *   checked against the hash embedded at packaging (macOS and Windows).
 * - file:// pages get no extra privileges (the window loads app:// instead).
 * - Chromium's cookie store is encrypted with the OS keychain (the app sets
 *   no cookies; this closes the door on any that would appear).
 */
const { FuseV1Options, FuseVersion } = require('@electron/fuses')

/** The fuses of every packaged build, for the platform being packaged. */
function fuseConfig(platform) {
  return {
    version: FuseVersion.V1,
    // Flipping fuses invalidates an ad-hoc signature (unsigned Apple silicon builds): redo it, or the app will not start.
    resetAdHocDarwinSignature: platform === 'darwin' || platform === 'mas',
    [FuseV1Options.RunAsNode]: false,
    [FuseV1Options.EnableCookieEncryption]: true,
    [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
    [FuseV1Options.EnableNodeCliInspectArguments]: false,
    [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
    [FuseV1Options.OnlyLoadAppFromAsar]: true,
    [FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]: false,
    [FuseV1Options.GrantFileProtocolExtraPrivileges]: false
  }
}

/** Called by electron-builder once the app is packed, before signing. */
async function afterPack(context) {
  // electron-builder's own helper finds the binary of each platform and runs @electron/fuses on it.
  await context.packager.addElectronFuses(context, fuseConfig(context.electronPlatformName))
}

module.exports = { afterPack, fuseConfig }
