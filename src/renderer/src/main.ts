import { createPinia } from 'pinia'
import { createApp } from 'vue'
import App from './App.vue'
import { watchNaiveAria } from './composables/naiveAria'
import { createAppRouter, preloadViews } from './router'
import './styles.css'

const router = createAppRouter()
const app = createApp(App).use(createPinia()).use(router)
// Mounted once the first view's chunk is in: the shell then starts on that view, not on an empty route.
void router.isReady().then(() => {
  app.mount('#app')
  watchNaiveAria()
  requestIdleCallback(preloadViews)
})
