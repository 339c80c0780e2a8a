FROM node:20.20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci applies patches/ (postinstall) to the installed packages.
COPY patches ./patches
RUN npm ci
COPY . .
RUN npm run build
ENV NODE_ENV=production PORT=8080
# HTTP (API, dashboard, OTLP/HTTP, MCP) and OTLP/gRPC.
EXPOSE 8080 4317
CMD ["node", "dist/src/main.js"]
