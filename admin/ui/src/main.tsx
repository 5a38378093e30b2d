// Entry: read the access token from the fragment, then mount the app.
import { render } from "preact";
import { App, NoToken } from "./app.js";
import { Api, takeToken } from "./api.js";
import "./styles.css";

const token = takeToken();
const root = document.getElementById("app")!;
render(token ? <App api={new Api(token)} /> : <NoToken />, root);
