import { createPinia } from 'pinia'
import { createApp } from 'vue'
import App from './App.vue'
import { watchNaiveAria } from './composables/naiveAria'
import { createAppRouter, preloadViews } from './router'
import { trackVaultData } from './stores/vaultData'
import { useVaultStore } from './stores/vault'
import { readViewData } from './viewData'
import './styles.css'

const router = createAppRouter()
const app = createApp(App).use(createPinia().use(trackVaultData))
// Each later navigation asks for its view's rows as it starts, before the view's chunk loads and its components mount.
router.beforeEach((to) => void readViewData(to))
app.use(router)

// The vault's state is read while the first view's chunk loads, not once the app has mounted.
const vault = useVaultStore()
const stateRead = vault.refresh()
let firstRows: Promise<unknown> | undefined
const readFirstRows = () => (firstRows ??= readViewData(router.currentRoute.value))

// Mounted once the first view's chunk is in: the shell then starts on that view, not on an empty route.
void router.isReady().then(() => {
  // The state is usually known by now: the first rows are then asked for before the shell mounts, not halfway through.
  if (vault.status) void readFirstRows()
  app.mount('#app')
  watchNaiveAria()
  // The other views' chunks load once the first view's rows are in, so that they do not hold those rows back.
  void stateRead.then(readFirstRows).finally(() => preloadViews(router))
})
