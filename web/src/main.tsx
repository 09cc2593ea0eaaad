import { render } from 'preact';
render(<h1>Waggle</h1>, document.getElementById('app')!);
