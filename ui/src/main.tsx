import './style.css';

import { render } from 'preact';

import { configureFromWindow } from './api';
import { App } from './app';

configureFromWindow();
render(<App />, document.getElementById('app')!);
